"""The label sets of the nine FewCLUE tasks, as the official files write them, and their answer words.

Labels are strings, as the leaderboard compares them: TNEWS ``"100"``…``"116"`` and IFLYTEK
``"0"``…``"118"`` (the files store both as JSON integers; the submission examples write
strings), CSLDCP the 67 Chinese discipline names of ``csldcp/labels_all.txt``.

The answer words (verbalizers) are short and, within a task, of one length, so a cloze model
(PET) can put one fixed number of masks at the answer position. For CSLDCP and IFLYTEK they
are the two-character tags FewCLUE's own data folders give each label (``label_des2tag`` in
``csldcp/labelDesc2label.py`` and ``iflytek/label_id2des_desc2short.py``, "for fixed-length
mask prediction"); TNEWS' are the ``label_zh`` names of ``tnews/label_index2en2zh.json``.
"""

from __future__ import annotations

_IFLYTEK = (  # (category name, two-character answer word), label ids 0..118 in order
    ("打车", "打车"), ("地图导航", "地图"), ("免费WIFI", "免费"), ("租车", "租车"), ("同城服务", "同城"),
    ("快递物流", "快递"), ("婚庆", "婚庆"), ("家政", "家政"), ("公共交通", "交通"), ("政务", "政务"),
    ("社区服务", "社区"), ("薅羊毛", "赚钱"), ("魔幻", "魔幻"), ("仙侠", "仙侠"), ("卡牌", "卡牌"),
    ("飞行空战", "飞行"), ("射击游戏", "射击"), ("休闲益智", "休闲"), ("动作类", "动作"), ("体育竞技", "体育"),
    ("棋牌中心", "棋牌"), ("经营养成", "养成"), ("策略", "策略"), ("MOBA", "竞技"), ("辅助工具", "辅助"),
    ("约会社交", "约会"), ("即时通讯", "通讯"), ("工作社交", "工作"), ("论坛圈子", "论坛"), ("婚恋社交", "婚恋"),
    ("情侣社交", "情侣"), ("社交工具", "社交"), ("生活社交", "生活"), ("微博博客", "博客"), ("新闻", "新闻"),
    ("漫画", "漫画"), ("小说", "小说"), ("技术", "技术"), ("教辅", "教辅"), ("问答交流", "问答"), ("搞笑", "搞笑"),
    ("杂志", "杂志"), ("百科", "百科"), ("影视娱乐", "影视"), ("求职", "求职"), ("兼职", "兼职"), ("视频", "视频"),
    ("短视频", "短视"), ("音乐", "音乐"), ("直播", "直播"), ("电台", "电台"), ("K歌", "唱歌"), ("成人", "两性"),
    ("中小学", "小学"), ("职考", "职考"), ("公务员", "公务"), ("英语", "英语"), ("视频教育", "在线"),
    ("高等教育", "教育"), ("成人教育", "成人"), ("艺术", "艺术"), ("语言(非英语)", "语言"), ("旅游资讯", "旅游"),
    ("综合预定", "预定"), ("民航", "民航"), ("铁路", "铁路"), ("酒店", "酒店"), ("行程管理", "行程"),
    ("民宿短租", "民宿"), ("出国", "出国"), ("工具", "工具"), ("亲子儿童", "亲子"), ("母婴", "母婴"),
    ("驾校", "驾校"), ("违章", "违章"), ("汽车咨询", "汽车"), ("汽车交易", "买车"), ("日常养车", "养车"),
    ("行车辅助", "行车"), ("租房", "租房"), ("买房", "买房"), ("装修家居", "装修"), ("电子产品", "电子"),
    ("问诊挂号", "挂号"), ("养生保健", "养生"), ("医疗服务", "医疗"), ("减肥瘦身", "减肥"), ("美妆美业", "美妆"),
    ("菜谱", "菜谱"), ("餐饮店", "餐饮"), ("体育咨讯", "资讯"), ("运动健身", "运动"), ("支付", "支付"),
    ("保险", "保险"), ("股票", "股票"), ("借贷", "借贷"), ("理财", "理财"), ("彩票", "彩票"), ("记账", "记账"),
    ("银行", "银行"), ("美颜", "美颜"), ("影像剪辑", "影像"), ("摄影修图", "摄影"), ("相机", "相机"),
    ("绘画", "绘画"), ("二手", "二手"), ("电商", "电商"), ("团购", "团购"), ("外卖", "外卖"), ("电影票务", "票务"),
    ("社区超市", "超市"), ("购物咨询", "购物"), ("笔记", "笔记"), ("办公", "办公"), ("日程管理", "日程"),
    ("女性", "女性"), ("经营", "经营"), ("收款", "收款"), ("其他", "其他"),
)
_CSLDCP = (  # (discipline, two-character answer word), in labels_all.txt's order
    ("材料科学与工程", "材料"), ("作物学", "作物"), ("口腔医学", "口腔"), ("药学", "药学"), ("教育学", "教育"),
    ("水利工程", "水利"), ("理论经济学", "理经"), ("食品科学与工程", "食品"), ("畜牧学/兽医学", "兽医"),
    ("体育学", "体育"), ("核科学与技术", "核能"), ("力学", "力学"), ("园艺学", "园艺"), ("水产", "水产"),
    ("法学", "法学"), ("地质学/地质资源与地质工程", "地质"), ("石油与天然气工程", "能源"), ("农林经济管理", "农林"),
    ("信息与通信工程", "通信"), ("图书馆、情报与档案管理", "情报"), ("政治学", "政治"), ("电气工程", "电气"),
    ("海洋科学", "海洋"), ("民族学", "民族"), ("航空宇航科学与技术", "航空"), ("化学/化学工程与技术", "化工"),
    ("哲学", "哲学"), ("公共卫生与预防医学", "卫生"), ("艺术学", "艺术"), ("农业工程", "农工"),
    ("船舶与海洋工程", "船舶"), ("计算机科学与技术", "计科"), ("冶金工程", "冶金"), ("交通运输工程", "交通"),
    ("动力工程及工程热物理", "动力"), ("纺织科学与工程", "纺织"), ("建筑学", "建筑"), ("环境科学与工程", "环境"),
    ("公共管理", "公管"), ("数学", "数学"), ("物理学", "物理"), ("林学/林业工程", "林业"), ("心理学", "心理"),
    ("历史学", "历史"), ("工商管理", "工商"), ("应用经济学", "应经"), ("中医学/中药学", "中医"), ("天文学", "天文"),
    ("机械工程", "机械"), ("土木工程", "土木"), ("光学工程", "光学"), ("地理学", "地理"), ("农业资源利用", "农资"),
    ("生物学/生物科学与工程", "生物"), ("兵器科学与技术", "兵器"), ("矿业工程", "矿业"), ("大气科学", "大气"),
    ("基础医学/临床医学", "医学"), ("电子科学与技术", "电子"), ("测绘科学与技术", "测绘"), ("控制科学与工程", "控制"),
    ("军事学", "军事"), ("中国语言文学", "语言"), ("新闻传播学", "新闻"), ("社会学", "社会"), ("地球物理学", "地球"),
    ("植物保护", "植物"),
)

EPRSTMT = ("Negative", "Positive")
EPRSTMT_WORDS = {"Negative": "负面", "Positive": "正面"}

CSLDCP = tuple(name for name, _ in _CSLDCP)
CSLDCP_WORDS = dict(_CSLDCP)

#: TNEWS label -> (label_desc, label_zh), from tnews/label_index2en2zh.json.
_TNEWS = {
    "100": ("news_story", "故事"), "101": ("news_culture", "文化"), "102": ("news_entertainment", "娱乐"),
    "103": ("news_sports", "体育"), "104": ("news_finance", "财经"), "106": ("news_house", "房产"),
    "107": ("news_car", "汽车"), "108": ("news_edu", "教育"), "109": ("news_tech", "科技"),
    "110": ("news_military", "军事"), "112": ("news_travel", "旅游"), "113": ("news_world", "国际"),
    "114": ("news_stock", "股票"), "115": ("news_agriculture", "农业"), "116": ("news_game", "电竞"),
}
TNEWS = tuple(_TNEWS)
TNEWS_DESCRIPTIONS = {label: desc for label, (desc, _) in _TNEWS.items()}
TNEWS_WORDS = {label: zh for label, (_, zh) in _TNEWS.items()}

IFLYTEK = tuple(str(index) for index in range(len(_IFLYTEK)))
IFLYTEK_DESCRIPTIONS = {str(index): name for index, (name, _) in enumerate(_IFLYTEK)}
IFLYTEK_WORDS = {str(index): word for index, (_, word) in enumerate(_IFLYTEK)}

NLI = ("entailment", "neutral", "contradiction")
NLI_WORDS = {"entailment": "蕴含", "neutral": "中立", "contradiction": "矛盾"}

BINARY = ("0", "1")
BUSTM_WORDS = {"0": "不同", "1": "相同"}
CSL_WORDS = {"0": "否", "1": "是"}

WSC = ("true", "false")
WSC_WORDS = {"true": "是", "false": "否"}
