"""The label sets of the classic tasks, as the official files write them.

Labels are always strings (TNEWS ``"100"``, IFLYTEK ``"0"``, CLUEWSC ``"true"``): the
leaderboard compares label strings, and a submission with class indices scores zero.
The TNEWS descriptions are those of the official ``labels.json`` (English keys; their
Chinese category names are in ``TNEWS_NAMES``); the IFLYTEK ones mirror its
``labels.json`` too and are the Chinese app category names.
"""

from __future__ import annotations

BINARY = ("0", "1")
NLI = ("entailment", "neutral", "contradiction")
WSC = ("true", "false")

TNEWS_DESCRIPTIONS = {
    "100": "news_story",
    "101": "news_culture",
    "102": "news_entertainment",
    "103": "news_sports",
    "104": "news_finance",
    "106": "news_house",
    "107": "news_car",
    "108": "news_edu",
    "109": "news_tech",
    "110": "news_military",
    "112": "news_travel",
    "113": "news_world",
    "114": "news_stock",
    "115": "news_agriculture",
    "116": "news_game",
}
TNEWS = tuple(TNEWS_DESCRIPTIONS)

#: The Chinese category names of TNEWS (the words an LLM answers with).
TNEWS_NAMES = {
    "100": "故事",
    "101": "文化",
    "102": "娱乐",
    "103": "体育",
    "104": "财经",
    "106": "房产",
    "107": "汽车",
    "108": "教育",
    "109": "科技",
    "110": "军事",
    "112": "旅游",
    "113": "国际",
    "114": "证券",
    "115": "农业",
    "116": "电竞",
}

_IFLYTEK_NAMES = (
    "打车", "地图导航", "免费WIFI", "租车", "同城服务", "快递物流", "婚庆", "家政", "公共交通", "政务", "社区服务",
    "薅羊毛", "魔幻", "仙侠", "卡牌", "飞行空战", "射击游戏", "休闲益智", "动作类", "体育竞技", "棋牌中心",
    "经营养成", "策略", "MOBA", "辅助工具", "约会社交", "即时通讯", "工作社交", "论坛圈子", "婚恋社交", "情侣社交",
    "社交工具", "生活社交", "微博博客", "新闻", "漫画", "小说", "技术", "教辅", "问答交流", "搞笑", "杂志", "百科",
    "影视娱乐", "求职", "兼职", "视频", "短视频", "音乐", "直播", "电台", "K歌", "成人", "中小学", "职考",
    "公务员", "英语", "视频教育", "高等教育", "成人教育", "艺术", "语言(非英语)", "旅游资讯", "综合预定", "民航",
    "铁路", "酒店", "行程管理", "民宿短租", "出国", "工具", "亲子儿童", "母婴", "驾校", "违章", "汽车咨询",
    "汽车交易", "日常养车", "行车辅助", "租房", "买房", "装修家居", "电子产品", "问诊挂号", "养生保健", "医疗服务",
    "减肥瘦身", "美妆美业", "菜谱", "餐饮店", "体育咨讯", "运动健身", "支付", "保险", "股票", "借贷", "理财",
    "彩票", "记账", "银行", "美颜", "影像剪辑", "摄影修图", "相机", "绘画", "二手", "电商", "团购", "外卖",
    "电影票务", "社区超市", "购物咨询", "笔记", "办公", "日程管理", "女性", "经营", "收款", "其他",
)
IFLYTEK_DESCRIPTIONS = {str(index): name for index, name in enumerate(_IFLYTEK_NAMES)}
IFLYTEK = tuple(IFLYTEK_DESCRIPTIONS)
